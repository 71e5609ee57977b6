package lockwait

import (
	"context"
	"errors"
	"testing"
	"time"
)

var errBusy, errOther = errors.New("busy"), errors.New("other")

func TestDo(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name      string
		ctx       context.Context
		timeout   time.Duration
		results   []error // what the tries return, in turn; the last repeats
		want      error
		wantTries int // 0: more than one, the timeout decides
	}{
		{"done at once", context.Background(), time.Minute, []error{nil}, nil, 1},
		{"busy, then free", context.Background(), time.Minute, []error{errBusy, errBusy, errBusy, nil}, nil, 4},
		{"busy, then another error", context.Background(), time.Minute, []error{errBusy, errOther}, errOther, 2},
		{"another error is not retried", context.Background(), time.Minute, []error{errOther, nil}, errOther, 1},
		{"busy past the timeout", context.Background(), 3 * time.Millisecond, []error{errBusy}, errBusy, 0},
		{"no timeout: one try", context.Background(), 0, []error{errBusy, nil}, errBusy, 1},
		{"ctx ended", cancelled, time.Minute, []error{errBusy, nil}, errBusy, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tries := 0
			err := Do(tc.ctx, tc.timeout, func(err error) bool { return err == errBusy }, func() error {
				tries++
				return tc.results[min(tries, len(tc.results))-1]
			})
			if err != tc.want {
				t.Errorf("err %v; want %v", err, tc.want)
			}
			if tc.wantTries > 0 && tries != tc.wantTries || tc.wantTries == 0 && tries < 2 {
				t.Errorf("%d tries; want %d (0: several)", tries, tc.wantTries)
			}
		})
	}
}
