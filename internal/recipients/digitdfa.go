package recipients

import (
	"encoding/binary"
	"errors"
	"regexp/syntax"
	"slices"
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

// nfaInst is one instruction of the patterns' programs, all numbered in
// one sequence.
type nfaInst struct {
	op      syntax.InstOp
	out     uint32 // the next instruction (Alt: the first of two)
	arg     uint32 // Alt: the second
	digits  uint16 // rune instructions: bit c set when the digit c matches
	pattern uint8
}

// newDigitDFA compiles patterns (at most 32, in regexp/syntax's Perl
// syntax, not anchored: each must match the whole input) into one
// automaton. A pattern with an assertion (^, $, \b) is refused, as is an
// automaton over maxDFAStates.
func newDigitDFA(patterns []string) (*digitDFA, error) {
	if len(patterns) > 32 {
		return nil, errors.New("more than 32 patterns")
	}
	var (
		insts  []nfaInst
		starts []uint32
	)
	for k, p := range patterns {
		re, err := syntax.Parse(p, syntax.Perl)
		if err != nil {
			return nil, err
		}
		prog, err := syntax.Compile(re.Simplify())
		if err != nil {
			return nil, err
		}
		base := uint32(len(insts))
		starts = append(starts, base+uint32(prog.Start))
		for _, in := range prog.Inst {
			ni := nfaInst{op: in.Op, out: base + in.Out, arg: base + in.Arg, pattern: uint8(k)}
			switch in.Op {
			case syntax.InstEmptyWidth:
				return nil, errors.New("assertion inside a pattern")
			case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
				for c := range 10 {
					if in.MatchRune(rune('0' + c)) {
						ni.digits |= 1 << c
					}
				}
			}
			insts = append(insts, ni)
		}
	}
	b := dfaBuilder{insts: insts, stamp: make([]uint32, len(insts)), index: map[string]int32{}}
	b.gen++
	var start []uint32
	for _, pc := range starts {
		start = b.closure(start, pc)
	}
	if len(start) == 0 { // no pattern matches anything: one state, dead ends only
		return &digitDFA{next: [][10]int32{{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1}}, accept: []uint32{0}}, nil
	}
	if _, err := b.add(start); err != nil {
		return nil, err
	}
	for s := 0; s < len(b.queue); s++ {
		for c := range 10 {
			b.gen++
			var to []uint32
			for _, pc := range b.queue[s] {
				if in := &insts[pc]; in.digits&(1<<c) != 0 {
					to = b.closure(to, in.out)
				}
			}
			n, err := b.add(to)
			if err != nil {
				return nil, err
			}
			b.d.next[s][c] = n
		}
	}
	return &b.d, nil
}

// dfaBuilder holds the subset construction's work.
type dfaBuilder struct {
	d     digitDFA
	insts []nfaInst
	stamp []uint32 // stamp[pc] == gen: pc is in the set being made
	gen   uint32
	index map[string]int32 // a set's key → its state
	queue [][]uint32       // state → its set of instructions, to find its transitions
	key   []byte
}

// closure adds pc and every instruction reached from it without reading
// a digit to set, keeping only those that read one or match.
func (b *dfaBuilder) closure(set []uint32, pc uint32) []uint32 {
	stack := []uint32{pc}
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if b.stamp[pc] == b.gen {
			continue
		}
		b.stamp[pc] = b.gen
		switch in := &b.insts[pc]; in.op {
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, in.arg, in.out)
		case syntax.InstCapture, syntax.InstNop:
			stack = append(stack, in.out)
		case syntax.InstFail:
		default: // runes and Match
			set = append(set, pc)
		}
	}
	return set
}

// add returns the state of set, made if it is new.
func (b *dfaBuilder) add(set []uint32) (int32, error) {
	if len(set) == 0 {
		return deadState, nil
	}
	slices.Sort(set)
	b.key = b.key[:0]
	for _, pc := range set {
		b.key = binary.LittleEndian.AppendUint32(b.key, pc)
	}
	if s, ok := b.index[string(b.key)]; ok {
		return s, nil
	}
	if len(b.d.next) >= maxDFAStates {
		return 0, errDFATooLarge
	}
	s := int32(len(b.d.next))
	b.index[string(b.key)] = s
	var acc uint32
	for _, pc := range set {
		if in := &b.insts[pc]; in.op == syntax.InstMatch {
			acc |= 1 << in.pattern
		}
	}
	b.d.next = append(b.d.next, [10]int32{})
	b.d.accept = append(b.d.accept, acc)
	b.queue = append(b.queue, set)
	return s, nil
}
