package storetest

func (s suite) inboxTests() []sub { return nil }
