package readmodel_test

import (
	"maps"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/storetest"
)

func TestSuppressedIn(t *testing.T) { eachBackend(t, testSuppressedIn) }

func testSuppressedIn(t *testing.T, b backend) {
	st := b.open(t, newFakeClock())
	if _, err := st.Suppress(t.Context(), []campaign.Suppression{{Phone: storetest.Phone(2), Reason: "STOP received"}, {Phone: storetest.Phone(700)}}); err != nil {
		t.Fatal(err)
	}
	var ask []string
	for i := range 1200 { // more than one statement's worth
		ask = append(ask, storetest.Phone(i))
	}
	got, err := readmodel.New(st).SuppressedIn(t.Context(), ask)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{storetest.Phone(2): "STOP received", storetest.Phone(700): ""}
	if !maps.Equal(got, want) {
		t.Errorf("SuppressedIn = %v, want %v", got, want)
	}
	if got, err := readmodel.New(st).SuppressedIn(t.Context(), nil); err != nil || got != nil {
		t.Errorf("SuppressedIn(none) = %v, %v; want nothing", got, err)
	}
}
