package recipients

import (
	"errors"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
)

// digitDFA matches a string of ASCII digits against several regular
// expressions at once, each anchored at both ends: one table step per
// digit, where regexp runs every pattern on its own (a backtracker or an
// NFA, ~100 ns a pattern for the dozen patterns a number is tried with).
// It is built once per region from the patterns' NFAs (regexp/syntax) by
// the subset construction; digits are all it reads, which is all a
// national significant number holds.
type digitDFA struct {
	next   [][10]int32 // state → digit → state; deadState: no pattern can match any more
	accept []uint32    // state → bit k set when pattern k matches the input read so far
}

const deadState = -1

// maxDFAStates bounds a region's automaton (the largest region, DE, has a
// few thousand states); a region beyond it keeps the slow path.
const maxDFAStates = 1 << 15

var errDFATooLarge = errors.New("automaton over its size limit")

// matchAll returns the set of patterns that match the whole of digits,
// bit k for pattern k; 0 when digits holds anything but 0-9.
func (d *digitDFA) matchAll(digits string) uint32 {
	s := int32(0)
	for i := 0; i < len(digits); i++ {
		c := digits[i] - '0'
		if c > 9 {
			return 0
		}
		if s = d.next[s][c]; s == deadState {
			return 0
		}
	}
	return d.accept[s]
}

// nfaState is one instruction of one pattern's program.
type nfaState struct {
	pattern int
	pc      uint32
}

// newDigitDFA compiles patterns (at most 32, in regexp/syntax's Perl
// syntax, not anchored: each must match the whole input) into one
// automaton. A pattern with an assertion other than ^ at its start or $
// at its end is refused, as is an automaton over maxDFAStates.
func newDigitDFA(patterns []string) (*digitDFA, error) {
	if len(patterns) > 32 {
		return nil, errors.New("more than 32 patterns")
	}
	progs := make([]*syntax.Prog, len(patterns))
	for k, p := range patterns {
		re, err := syntax.Parse(p, syntax.Perl)
		if err != nil {
			return nil, err
		}
		if progs[k], err = syntax.Compile(re.Simplify()); err != nil {
			return nil, err
		}
	}
	var start []nfaState
	for k, prog := range progs {
		var err error
		if start, err = closure(progs, start, nfaState{k, uint32(prog.Start)}); err != nil {
			return nil, err
		}
	}
	d := &digitDFA{}
	index := map[string]int32{}
	var queue [][]nfaState
	add := func(set []nfaState) (int32, error) {
		if len(set) == 0 {
			return deadState, nil
		}
		slices.SortFunc(set, func(a, b nfaState) int {
			if a.pattern != b.pattern {
				return a.pattern - b.pattern
			}
			return int(a.pc) - int(b.pc)
		})
		set = slices.Compact(set)
		key := setKey(set)
		if s, ok := index[key]; ok {
			return s, nil
		}
		if len(d.next) >= maxDFAStates {
			return 0, errDFATooLarge
		}
		s := int32(len(d.next))
		index[key] = s
		var acc uint32
		for _, st := range set {
			if progs[st.pattern].Inst[st.pc].Op == syntax.InstMatch {
				acc |= 1 << st.pattern
			}
		}
		d.next = append(d.next, [10]int32{})
		d.accept = append(d.accept, acc)
		queue = append(queue, set)
		return s, nil
	}
	if _, err := add(start); err != nil {
		return nil, err
	}
	for s := 0; s < len(queue); s++ {
		set := queue[s]
		for c := range 10 {
			var to []nfaState
			for _, st := range set {
				in := &progs[st.pattern].Inst[st.pc]
				switch in.Op {
				case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
					if in.MatchRune(rune('0' + c)) {
						var err error
						if to, err = closure(progs, to, nfaState{st.pattern, in.Out}); err != nil {
							return nil, err
						}
					}
				}
			}
			n, err := add(to)
			if err != nil {
				return nil, err
			}
			d.next[s][c] = n
		}
	}
	return d, nil
}

// closure adds st and every state reached from it without reading a digit
// to set.
func closure(progs []*syntax.Prog, set []nfaState, st nfaState) ([]nfaState, error) {
	stack := []nfaState{st}
	seen := map[nfaState]bool{}
	for len(stack) > 0 {
		st := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[st] {
			continue
		}
		seen[st] = true
		in := &progs[st.pattern].Inst[st.pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, nfaState{st.pattern, in.Arg}, nfaState{st.pattern, in.Out})
		case syntax.InstCapture, syntax.InstNop:
			stack = append(stack, nfaState{st.pattern, in.Out})
		case syntax.InstEmptyWidth:
			return nil, errors.New("assertion inside a pattern")
		case syntax.InstFail:
		default: // runes and Match: states the automaton keeps
			set = append(set, st)
		}
	}
	return set, nil
}

func setKey(set []nfaState) string {
	var b strings.Builder
	for _, st := range set {
		b.WriteString(strconv.Itoa(st.pattern))
		b.WriteByte(':')
		b.WriteString(strconv.FormatUint(uint64(st.pc), 10))
		b.WriteByte(',')
	}
	return b.String()
}
