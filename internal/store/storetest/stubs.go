package storetest

func (s suite) moveTests() []sub  { return nil }
func (s suite) inboxTests() []sub { return nil }
