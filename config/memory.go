package config

import (
	"context"

	"github.com/sngen/sn/sequence"
)

// memoryName is the backend of a Sequence that names none.
const memoryName = "memory"

func init() { Register(memoryName, memoryDriver{}) }

// memoryDriver is the memory backend: one sequence.Memory per Build,
// shared by the Build's templates, so that templates with the same
// counter key share a counter. Its numbers restart with the process: it
// is for tests, examples and numbers that only need to be unique while a
// process runs.
type memoryDriver struct{}

// Check accepts every memory sequence; the backend reads no field.
func (memoryDriver) Check(*Target) (StoreInfo, error) {
	return StoreInfo{ID: memoryName, Durable: false}, nil
}

// Open returns the Build's Memory.
func (memoryDriver) Open(ctx context.Context, t *Target) (sequence.Gen, error) {
	return Share(t, memoryName, func() (*sequence.Memory, error) { return sequence.NewMemory(), nil })
}
