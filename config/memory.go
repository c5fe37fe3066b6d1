package config

import (
	"context"

	"github.com/sngen/sn/sequence"
)

// memoryName is the backend of a Sequence that names none.
const memoryName = "memory"

func init() { Register(memoryName, memoryDriver{}) }

// memoryDriver is the memory backend: one sequence.Memory per Build (and
// tenant), shared by the Build's templates, so that templates with the same
// counter key share a counter. Its numbers restart with the process: it
// is for tests, examples and numbers that only need to be unique while a
// process runs.
type memoryDriver struct{}

// Check accepts every memory sequence; the backend reads no field. Each
// tenant has a Memory of its own.
func (memoryDriver) Check(t *Target) (StoreInfo, error) {
	return StoreInfo{ID: memoryID(t), Durable: false}, nil
}

// Open returns the Build's Memory of the template's tenant.
func (memoryDriver) Open(ctx context.Context, t *Target) (sequence.Gen, error) {
	return Share(t, memoryID(t), func() (*sequence.Memory, error) { return sequence.NewMemory(), nil })
}

// memoryID is the ID of the Memory of t's tenant.
func memoryID(t *Target) string {
	if t.Tenant == "" {
		return memoryName
	}
	return memoryName + " of tenant " + t.Tenant
}
