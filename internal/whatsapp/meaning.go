package whatsapp

// classMeanings say what each Class means for the row and its account, in
// the words an operator reads beside a code (the HTML report's error
// table): the classifier's decisions, not a second table of codes.
var classMeanings = [...]string{
	ClassOK:              "accepted",
	ClassThrottled:       "the number, WABA or app was over its rate: the account slowed down and the row was retried",
	ClassPairThrottled:   "too many messages to this one recipient: the row was put back for later",
	ClassLongRestriction: "the account is restricted for hours: it was paused, its rows left pending",
	ClassTransient:       "a passing error, the message not accepted: retried with backoff, a few times",
	ClassPermanent:       "this row can never succeed as it is: it failed and is not retried",
	ClassCampaignFatal:   "the template, or how the campaign fills it, is wrong for every row: the campaign stopped",
	ClassAccountFatal:    "the token or the account needs a human: every send on the account stopped",
	ClassAmbiguous:       "no answer came after the request was written: the message may have been accepted, so it is not resent",
}

// Meaning says in one line what the class means for the row and its
// account.
func (c Class) Meaning() string {
	if c >= 0 && int(c) < len(classMeanings) {
		return classMeanings[c]
	}
	return c.String()
}
