package campaign

import "testing"

func TestCheckListable(t *testing.T) {
	for p, ok := range map[string]bool{
		"+4915100000001": true, "+12": true, "+123456789012345": true,
		"+1": false, "+1234567890123456": false, "+0491510": false, "4915100000001": false,
		"+49 151": false, "+49151x": false, "": false, "+": false,
	} {
		if err := CheckListable(p); (err == nil) != ok {
			t.Errorf("CheckListable(%q) = %v, want ok %v", p, err, ok)
		}
	}
}
