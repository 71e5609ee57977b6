package limits_test

import (
	"testing"
	"time"

	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/limits/limitstest"
)

// refHarness is the reference model with a clock the steps set.
type refHarness struct {
	clk *clock.Sim
	g   *limits.Reference
}

func newRefHarness(t *testing.T) limitstest.Harness {
	h := &refHarness{clk: clock.NewSim(limitstest.T0)}
	h.g = limits.NewReference(h.clk.Now)
	return h
}

func (h *refHarness) Gate() limits.Gate  { return h.g }
func (h *refHarness) LoseState()         { h.g.LoseState() }
func (h *refHarness) SetNow(t time.Time) { h.clk.Set(t) }

func TestReferenceConformance(t *testing.T) {
	limitstest.Run(t, newRefHarness)
}
