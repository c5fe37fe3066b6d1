package etcdseq

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/record"
	"github.com/sngen/sn/sequence/snowflake"
)

// Leaser leases snowflake worker ids from the cluster: a
// [snowflake.Leaser], the counterpart of sqlseq's and redisseq's for
// deployments whose shared store is etcd.
//
// It is the [snowflake.RecordLeaser] over the Store's records
// ([Store.Records]): each id of a name is a record holding a random
// token, the holder's; a deadline by the Store's shared clock
// (the clock of its records), never a client's; and the bound, the last instant its
// holders may have issued at. Taking, renewing and releasing an id are
// each one transaction guarded by the id's ModRevision, committed on a
// majority of members.
//
// An earlier release kept each id in keys of its own, w/NAME/ID/holder
// under an etcd lease and w/NAME/ID/bound, and its processes may still
// run beside this one's: the Leaser leases beside them
// ([snowflake.RecordLeaser.Beside]). It takes an id only while that
// release's holder key of it is absent, and puts the key, in the
// transaction that takes it, so that no process of that release takes
// the id after; it issues above that release's bound of the id; and the
// two releases record one layout per name. A process of that release
// keeps the ids it holds until it lets them go or its etcd lease lapses.
// A Leaser is safe for concurrent use.
type Leaser struct {
	s *Store
	l *snowflake.RecordLeaser
}

// LeaserOptions configure a [Leaser]. The zero value gives the defaults.
type LeaserOptions struct {
	// Name tells apart series of ids that may reuse one another's worker
	// ids (two layouts, two services): at most 255 bytes, without "/".
	// default: "snowflake".
	Name string
}

// NewLeaser returns a Leaser over the Store's cluster. A nil s, or a name
// that is too long or holds "/", is an error wrapping
// [sequence.ErrInvalidArgument].
func NewLeaser(s *Store, o LeaserOptions) (*Leaser, error) {
	if o.Name == "" {
		o.Name = "snowflake"
	}
	if s == nil || len(o.Name) > 255 || strings.Contains(o.Name, "/") {
		return nil, fmt.Errorf("%w: etcdseq.NewLeaser(%v, name %.40q): want a Store and a name of 1 to 255 bytes without /", sequence.ErrInvalidArgument, s != nil, o.Name)
	}
	l, err := snowflake.NewRecordLeaser(s.Records(), o.Name)
	if err != nil {
		return nil, err
	}
	id := func(kind string) func(int64) string {
		return func(id int64) string { return "w/" + o.Name + "/" + strconv.FormatInt(id, 10) + "/" + kind }
	}
	l.Beside(snowflake.Earlier{Layout: "r/snowflake layout " + o.Name, Holder: id("holder"), Bound: id("bound")})
	return &Leaser{s: s, l: l}, nil
}

// Prefix returns the prefix of the keys of the Leaser's Store.
func (l *Leaser) Prefix() string { return l.s.prefix }

// Lease takes a free worker id below layout.Workers() for ttl (see
// [snowflake.RecordLeaser.Lease]): one a holder released if there is
// one, else the first free one from a random id on. It returns an error
// wrapping [snowflake.ErrLayout] for a name leased in another layout,
// [sequence.ErrUnavailable] when every id is held (or the cluster cannot
// serve), and [sequence.ErrInvalidArgument] for a ttl under 1ms.
func (l *Leaser) Lease(ctx context.Context, layout snowflake.Layout, ttl time.Duration) (snowflake.Lease, error) {
	return l.l.Lease(ctx, layout, ttl)
}

// Records returns the records of the Leaser's cluster (see
// [Store.Records]): the leases, the catalog of its series and the claims
// of idempotency keys for the ids of a snowflake Gen that leases its
// worker there.
func (l *Leaser) Records() record.Store { return l.s.Records() }

var _ snowflake.Leaser = (*Leaser)(nil)
