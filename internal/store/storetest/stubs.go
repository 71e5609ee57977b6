package storetest

func (s suite) claimTests() []sub  { return nil }
func (s suite) recordTests() []sub { return nil }
func (s suite) rescueTests() []sub { return nil }
func (s suite) moveTests() []sub   { return nil }
func (s suite) inboxTests() []sub  { return nil }
