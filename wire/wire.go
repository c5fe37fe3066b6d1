// Package wire defines what sn serve and its clients say to each other:
// the JSON bodies of the HTTP API's requests and answers, and the table
// between the stable error codes of an answer and the sentinel errors of
// packages sn and sequence, so that a client's errors match errors.Is as
// the library's do.
//
// The server (package server) and the Go client (package client) share
// it; it links neither the template compiler nor the config loader.
package wire

import (
	"time"
)

// The bodies of requests and responses, as JSON.

// NextRequest asks for numbers: POST /v1/templates/{name}/next, and
// /preview for samples that draw nothing.
type NextRequest struct {
	// N is how many numbers, 1 to sn.MaxN; absent means 1, and 0 is
	// refused (a client that sends the length of an empty list gets an
	// error, not a number).
	N int `json:"n,omitempty"`
	// Vars are the per-call variables.
	Vars map[string]string `json:"vars,omitempty"`
	// At is the document's instant, RFC 3339; "" means the server's
	// clock.
	At string `json:"at,omitempty"`
}

// NextResponse is the numbers issued, in order.
type NextResponse struct {
	Numbers []string `json:"numbers"`
}

// VoidRequest voids a number the template printed: POST
// /v1/templates/{name}/void. Reason is required.
type VoidRequest struct {
	Number string `json:"number"`
	Reason string `json:"reason"`
}

// VoidResponse says that a number is recorded as void in its counter's
// journal.
type VoidResponse struct {
	Number string `json:"number"`
	Void   bool   `json:"void"`
}

// HoldRequest holds a number of a gapless template for a document that
// becomes final later: POST /v1/templates/{name}/hold. The number is
// taken at once; commit it (/commit) or void it (/void) by the deadline.
type HoldRequest struct {
	// Vars are the per-call variables.
	Vars map[string]string `json:"vars,omitempty"`
	// At is the document's instant, RFC 3339; "" means the server's
	// clock.
	At string `json:"at,omitempty"`
	// TTL is how long the number is held before an audit reports the
	// hold lapsed, as a Go duration ("15m", "24h"): 1s to 2160h (90
	// days). Required.
	TTL string `json:"ttl"`
}

// HoldResponse is the number held, and when its hold lapses.
type HoldResponse struct {
	Number   string    `json:"number"`
	Deadline time.Time `json:"deadline"`
}

// CommitRequest makes a held number final: POST
// /v1/templates/{name}/commit.
type CommitRequest struct {
	Number string `json:"number"`
}

// CommitResponse says that a held number is committed in its counter's
// journal.
type CommitResponse struct {
	Number    string `json:"number"`
	Committed bool   `json:"committed"`
}

// NumberRequest names a number to validate or parse: POST
// /v1/templates/{name}/validate and /parse.
type NumberRequest struct {
	Number string `json:"number"`
}

// ValidateResponse says whether a number is one the template prints. An
// invalid number is not an error of the request: Valid is false and Error
// says why (code invalid_number, with the part and positions).
type ValidateResponse struct {
	Valid bool   `json:"valid"`
	Error *Error `json:"error,omitempty"`
}

// ParseResponse is a number read back: sn.Parsed.
type ParseResponse struct {
	Key string `json:"key"`
	// Seq is a JSON string: above 2^53 a JSON number loses digits in
	// JavaScript.
	Seq   int64             `json:"seq,string"`
	Vars  map[string]string `json:"vars,omitempty"`
	Draws []Draw            `json:"draws"`
}

// Draw is the counter key and number of one sequence part: sn.Draw.
type Draw struct {
	Part   string `json:"part"`
	Offset int    `json:"offset"`
	Key    string `json:"key"`
	Seq    int64  `json:"seq,string"` // a JSON string, as ParseResponse.Seq
}

// TemplateInfo describes one template: GET /v1/templates lists them,
// GET /v1/templates/{name} gives one with its parts (sn.Explanation). Its
// schema in the OpenAPI document is Template.
type TemplateInfo struct {
	Name     string `json:"name"`
	Template string `json:"template"`
	MaxLen   int    `json:"max_len"`
	Regexp   string `json:"regexp"`
	Parts    []Part `json:"parts,omitempty"`
	// Engine is the server's sn.Engine(): how it renders numbers. A
	// client that renders the template's numbers from blocks must have
	// the same.
	Engine string `json:"engine,omitempty"`
	// MaxBlock is the largest block POST .../blocks hands out; 0 when the
	// template hands out none, and NoBlocks says why.
	MaxBlock int64  `json:"max_block,omitempty"`
	NoBlocks string `json:"no_blocks,omitempty"`
	// Actions are what the request's token may do with the template:
	// "issue", "read", "monitor", "admin".
	Actions []string `json:"actions,omitempty"`
}

// BlockRequest is the body of POST /v1/templates/{name}/blocks: a block
// of a counter of the template, whose numbers the client renders itself.
type BlockRequest struct {
	// Key is the counter key, as the template makes it for a call.
	Key string `json:"key"`
	// N is how many numbers: 1 to the template's MaxBlock.
	N int64 `json:"n"`
	// Template is the template's canonical text the client renders, and
	// Engine the client's sn.Engine(): both must be the server's.
	Template string `json:"template"`
	Engine   string `json:"engine"`
	// Now is the client's clock, RFC 3339: it must be within
	// MaxClockSkew of the server's, for the client prints dates and
	// picks periods by it.
	Now string `json:"now"`
	// Client names the client process in the journal (its host, program
	// and pid), at most 200 bytes.
	Client string `json:"client,omitempty"`
}

// MaxClockSkew is how far a client's clock may be from the server's when
// it takes a block.
const MaxClockSkew = 2 * time.Second

// BlockResponse is a block of numbers of one counter key, First to Last:
// the client's to issue, and no one else's.
type BlockResponse struct {
	Key   string `json:"key"`
	First int64  `json:"first"`
	Last  int64  `json:"last"`
	// Receipt is a secret of the client process's blocks of the key: the
	// same for each block the server hands it, and asked for with its
	// notes (BlockNote), so that no other process, with the same token
	// or not, notes in its name.
	Receipt string `json:"receipt"`
}

// BlockNote is the body of POST /v1/templates/{name}/notes: a record a
// client of remote blocks adds to a counter's journal about its own
// blocks, as a Segment notes them in a store it reaches itself. Kind is
// "released" (numbers of a block handed to the client that it will never
// issue, such as the rest of its blocks when it closes), "lost" (numbers
// reserved for the client in an answer that never reached it) or
// "closed" (it holds none of the key's numbers up to Last any more;
// First is 1). Client is the BlockRequest's: the record is the token's
// and the client process's, as the blocks were; Receipt proves it.
type BlockNote struct {
	Key    string `json:"key"`
	Kind   string `json:"kind"`
	First  int64  `json:"first"`
	Last   int64  `json:"last"`
	Reason string `json:"reason,omitempty"`
	Client string `json:"client,omitempty"`
	// Receipt is the BlockResponse's, of the client's blocks of the key.
	Receipt string `json:"receipt"`
}

// BlockNoteResponse is the record as the counter's journal keeps it.
type BlockNoteResponse struct {
	Seq int64  `json:"seq"`
	By  string `json:"by"`
}

// Part is one part of a template: sn.PartInfo.
type Part struct {
	Source  string `json:"source"`
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Offset  int    `json:"offset"`
	Order   string `json:"order"`
	MaxLen  int    `json:"max_len"`
	Pattern string `json:"pattern"`
	Key     string `json:"key,omitempty"`
}

// TemplatesResponse lists the templates, by name.
type TemplatesResponse struct {
	Templates []TemplateInfo `json:"templates"`
}

// Health is the answer of GET /readyz: ready when every store answers.
type Health struct {
	Ready  bool          `json:"ready"`
	Stores []StoreHealth `json:"stores"`
}

// StoreHealth is one store's answer.
type StoreHealth struct {
	// Store says where the numbers are kept (passwords hidden).
	Store string `json:"store"`
	// Templates are the templates whose numbers come from the store.
	Templates []string `json:"templates"`
	OK        bool     `json:"ok"`
	Error     string   `json:"error,omitempty"`
	// Millis is how long the store took to answer.
	Millis float64 `json:"millis"`
}

// ErrorResponse is the body of every response whose status is not 2xx.
type ErrorResponse struct {
	Error Error `json:"error"`
}

// Error is an error of a request: a stable Code (see [Code]), a message
// for people and, where they apply, the field of the request at fault and,
// for an invalid number, the template part and positions.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
	// Part is the template part an invalid number does not match, Offset
	// its byte offset in the template, and Pos the byte offset in the
	// number where the problem starts.
	Part   string `json:"part,omitempty"`
	Offset *int   `json:"offset,omitempty"`
	Pos    *int   `json:"pos,omitempty"`
}

// Error makes e an error: the server passes the answers it gives before
// a Generator sees the request to the Generator's middleware
// (sn.Generator.Refuse), and [Classify] gives back e.Code.
func (e Error) Error() string { return string(e.Code) + ": " + e.Message }

// Monitor is the answer of GET /v1/monitor: what the monitor page at
// /monitor shows, read when asked. Counts are since the server started;
// the page turns them into rates between two readings.
type Monitor struct {
	Time      time.Time         `json:"time"`
	Ready     bool              `json:"ready"`
	Stores    []StoreHealth     `json:"stores"`
	Templates []MonitorTemplate `json:"templates"`
	// Series are the templates of the catalogs of the stores (every
	// template ever drawn from them, by any process), by store, oldest
	// first, at most MaxMonitorSeries; MoreSeries counts those left out.
	Series     []MonitorSeries `json:"series"`
	MoreSeries int             `json:"more_series"`
}

// MaxMonitorSeries bounds Monitor.Series.
const MaxMonitorSeries = 200

// MonitorSeries is one template of a store's catalog.
type MonitorSeries struct {
	// Store is the store whose catalog holds it, as in MonitorTemplate.
	Store string `json:"store"`
	// ID identifies what the template prints (sn series forget takes it).
	ID string `json:"id"`
	// Name is its name where it was first used, or "".
	Name string `json:"name"`
	// Template is its canonical text.
	Template string `json:"template"`
	// First is when it was first used, by the store's clock; By by whom.
	First time.Time `json:"first"`
	By    string    `json:"by"`
}

// MonitorTemplate is one template as the monitor sees it.
type MonitorTemplate struct {
	Name     string `json:"name"`
	Template string `json:"template"`
	// Store says where the numbers are kept (passwords hidden).
	Store string `json:"store"`
	// Issued counts the numbers issued through this server.
	Issued int64 `json:"issued"`
	// Errors counts the requests to issue that failed, by code: those
	// the Generator refused and those refused before it (a bad body, n
	// or at).
	Errors map[Code]int64 `json:"errors"`
	// ClientErrors and ServerErrors sum Errors by the status of their
	// codes: below 500 (the request was wrong, or its client went away)
	// and 500 or above (the server or its store failed).
	ClientErrors int64 `json:"client_errors"`
	ServerErrors int64 `json:"server_errors"`
	// Blocks are the counters of the blocks under the template's
	// sequence; null for a sequence that issues without blocks.
	Blocks *Blocks `json:"blocks"`
	// Keys are the counter keys held in memory, in key order, at most
	// MaxMonitorKeys of them (which ones, when there are more, is
	// unspecified); MoreKeys counts those left out.
	Keys     []KeyState `json:"keys"`
	MoreKeys int        `json:"more_keys"`
	// Lease is the snowflake worker id's lease; null without one.
	Lease *LeaseState `json:"lease"`
	// Handed counts the numbers handed out in blocks (POST .../blocks),
	// in Blocks of them.
	Handed      int64 `json:"handed"`
	HandedBlock int64 `json:"handed_blocks"`
	// History is the last hour, a point every few seconds.
	History *History `json:"history"`
	// Capacity is how much of the template's width is used; null for a
	// template whose numbers have no width.
	Capacity *Capacity `json:"capacity"`
	// Gaps are the latest journal records of the fullest key that leave
	// numbers unissued, newest first: what sn gaps explains.
	Gaps []Gap `json:"gaps"`
}

// History is a template's last hour in the monitor: per point of
// StepSeconds, oldest first, the last one ending at End (and under way).
// The points before the first that holds anything are left out.
type History struct {
	StepSeconds float64   `json:"step_seconds"`
	End         time.Time `json:"end"`
	// Issued and Handed are numbers issued by next and handed out in
	// blocks; ClientErrors and ServerErrors requests to issue that failed
	// with a 4xx and a 5xx.
	Issued       []int64 `json:"issued"`
	Handed       []int64 `json:"handed"`
	ClientErrors []int64 `json:"client_errors"`
	ServerErrors []int64 `json:"server_errors"`
	// Fetches are block fetches of the template's stores, FetchMillis the
	// time they took, summed, in milliseconds, and Waits the calls that
	// waited at a block's edge.
	Fetches     []int64   `json:"fetches"`
	FetchMillis []float64 `json:"fetch_millis"`
	Waits       []int64   `json:"waits"`
}

// Capacity is how much of a template's width its fullest counter key
// has used: Last of Max, and at Rate, the numbers per second of the last
// ten minutes, when the width runs out, if before the key's period ends.
type Capacity struct {
	Max   int64   `json:"max,string"`
	Key   string  `json:"key"`
	Last  int64   `json:"last,string"`
	Ratio float64 `json:"ratio"`
	Rate  float64 `json:"rate"`
	// PeriodEnd is when the key's period ends (reset=); null for a key
	// that never resets.
	PeriodEnd *time.Time `json:"period_end"`
	// RunsOut is when, at Rate, the width is used up, when that comes
	// before the period ends (and within 400 days); null otherwise.
	RunsOut *time.Time `json:"runs_out"`
	// Warn is true when RunsOut is set, or Ratio is 0.8 or more.
	Warn bool `json:"warn"`
}

// Gap is a journal record that leaves numbers unissued.
type Gap struct {
	Kind   string    `json:"kind"`
	First  int64     `json:"first,string"`
	Last   int64     `json:"last,string"`
	At     time.Time `json:"at"`
	By     string    `json:"by"`
	Actor  string    `json:"actor,omitempty"`
	Reason string    `json:"reason,omitempty"`
}

// MaxMonitorKeys bounds the keys of a MonitorTemplate.
const MaxMonitorKeys = 100

// Blocks count the block fetches of a template's stores (see
// sequence.SegmentStats).
type Blocks struct {
	Fetches     int64 `json:"fetches"`
	Errors      int64 `json:"errors"`
	Waits       int64 `json:"waits"`
	Late        int64 `json:"late"`
	Regressions int64 `json:"regressions"`
	// FetchMillis is the time spent fetching, in milliseconds: divided by
	// Fetches, the store's mean latency.
	FetchMillis float64 `json:"fetch_millis"`
}

// KeyState is one counter key of a Segment: the last number drawn, the
// block it came from and the block fetched ahead. Numbers are the store's
// counter values: under queued, the queue draws ahead of the callers;
// under balanced, each member lists the key with its own counter, which
// the template prints with the member's index in its low bits.
type KeyState struct {
	Key string `json:"key"`
	// Last is the last number drawn from Block; 0 when none was. It is a
	// JSON string, as are the ends of a Range: above 2^53 a JSON number
	// loses digits in JavaScript.
	Last     int64  `json:"last,string"`
	Block    *Range `json:"block"`
	Next     *Range `json:"next"`
	Step     int64  `json:"step"`
	Fetching bool   `json:"fetching"`
	// Error is that of the last failed fetch, cleared by a success.
	Error string `json:"error,omitempty"`
}

// Range is a block of numbers, both ends included.
type Range struct {
	First int64 `json:"first,string"`
	Last  int64 `json:"last,string"`
}

// LeaseState is a snowflake Gen's hold on its worker id.
type LeaseState struct {
	Worker int64 `json:"worker"`
	// Leased is false for a worker id given by hand.
	Leased bool `json:"leased"`
	// Valid is until when the Gen issues without another renewal.
	Valid time.Time `json:"valid"`
	OK    bool      `json:"ok"`
	Error string    `json:"error,omitempty"`
}
