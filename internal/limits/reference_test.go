package limits_test

import (
	"sync"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/limits/limitstest"
)

// refHarness is the reference model with a clock the steps set.
type refHarness struct {
	mu  sync.Mutex
	now time.Time
	g   *limits.Reference
}

func newRefHarness(t *testing.T) limitstest.Harness {
	h := &refHarness{now: limitstest.T0}
	h.g = limits.NewReference(func() time.Time {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.now
	})
	return h
}

func (h *refHarness) Gate() limits.Gate { return h.g }
func (h *refHarness) LoseState()        { h.g.LoseState() }
func (h *refHarness) SetNow(t time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.now = t
}

func TestReferenceConformance(t *testing.T) {
	limitstest.Run(t, newRefHarness)
}
