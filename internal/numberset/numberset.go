// Package numberset is an exact set of phone numbers, each with the line
// of the file it was first seen on: how wasend finds duplicates in lists
// of millions of rows within a few tens of MiB.
package numberset

import "math"

// Set is the exact set of numbers added to it, each with its line.
//
// A million numbers take about 20 MiB: E.164 is at most 15 digits, so a
// number is kept as an integer in keys, its line in lines, and the hash
// table, slots, holds only positions into those. A Go map of the same
// would take twice that.
type Set struct {
	// slots: 1 + position in keys and lines in the low posBits, a tag of
	// the key's hash above; 0 = empty. Linear probing. The tag spares a
	// look at the key (a cache miss in a table of millions) in all but
	// one in 64 of the slots a lookup passes.
	slots []uint32
	shift uint // 64 - log2(len(slots))
	n     int  // numbers in keys and lines
	// keys and lines are in blocks of numberBlock, so that growing never
	// copies them or leaves garbage for the collector.
	keys  [][]uint64
	lines [][]uint32
	// other holds numbers that aren't + and up to 17 digits, and those
	// from lines past 2³²-1. Normalised numbers from real files never are;
	// the set stays exact for anything it is given.
	other map[string]int
}

const numberBlock = 1 << 16

const (
	tagBits = 6
	posBits = 32 - tagBits
	posMask = 1<<posBits - 1 // also the most numbers kept in keys; more go to other
)

// New returns an empty set.
func New() *Set {
	const slots = 1 << 12
	return &Set{slots: make([]uint32, slots), shift: 64 - 12}
}

// Add records number as found on line, unless it was recorded before: then
// it returns the earlier line and true.
func (s *Set) Add(number string, line int) (first int, dup bool) {
	key, ok := numberKey(number)
	var (
		i   uint64
		tag uint32
	)
	if ok {
		i, tag = s.find(key)
		if p := s.slots[i]; p != 0 {
			return int(s.line(p&posMask - 1)), true
		}
	}
	if first, dup := s.other[number]; dup {
		return first, true
	}
	if !ok || line < 0 || line > math.MaxUint32 || s.n >= posMask {
		if s.other == nil {
			s.other = map[string]int{}
		}
		s.other[number] = line
		return 0, false
	}
	if s.n%numberBlock == 0 {
		s.keys = append(s.keys, make([]uint64, numberBlock))
		s.lines = append(s.lines, make([]uint32, numberBlock))
	}
	s.keys[s.n/numberBlock][s.n%numberBlock] = key
	s.lines[s.n/numberBlock][s.n%numberBlock] = uint32(line)
	s.n++
	s.slots[i] = tag | uint32(s.n)
	if s.n > len(s.slots)/4*3 {
		s.grow()
	}
	return 0, false
}

// Has reports whether number was added.
func (s *Set) Has(number string) bool {
	_, ok := s.Line(number)
	return ok
}

// Line returns the line number was added with, and whether it was.
func (s *Set) Line(number string) (int, bool) {
	if key, ok := numberKey(number); ok {
		if i, _ := s.find(key); s.slots[i] != 0 {
			return int(s.line(s.slots[i]&posMask - 1)), true
		}
	}
	line, ok := s.other[number]
	return line, ok
}

func (s *Set) key(p uint32) uint64  { return s.keys[p/numberBlock][p%numberBlock] }
func (s *Set) line(p uint32) uint32 { return s.lines[p/numberBlock][p%numberBlock] }

// find returns the slot holding key, or the empty slot where it goes, and
// key's tag (in place in a slot). The slot is chosen by the hash's top
// bits and the tag taken from the bits below them.
func (s *Set) find(key uint64) (uint64, uint32) {
	h := key * 0x9E3779B97F4A7C15
	tag := uint32(h>>(s.shift-tagBits)) << posBits
	mask := uint64(len(s.slots) - 1)
	for i := h >> s.shift; ; i = (i + 1) & mask {
		if p := s.slots[i]; p == 0 || (p&^posMask == tag && s.key(p&posMask-1) == key) {
			return i, tag
		}
	}
}

func (s *Set) grow() {
	s.slots = make([]uint32, 2*len(s.slots))
	s.shift--
	for p := range uint32(s.n) {
		i, tag := s.find(s.key(p))
		s.slots[i] = tag | (p + 1)
	}
}

// numberKey packs "+" and 1 to 17 digits into an integer: the digits'
// value times 32 plus their count, so that +0049 and +49 differ.
func numberKey(number string) (uint64, bool) {
	digits := len(number) - 1
	if digits < 1 || digits > 17 || number[0] != '+' {
		return 0, false
	}
	var v uint64
	for i := 1; i < len(number); i++ {
		c := number[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v<<5 | uint64(digits), true
}
