package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/recipients"
)

// PhoneOnlyReason is the skip of a row known only by a business-scoped
// user id when the template is an authentication one: Meta refuses those
// (error 131062; docs/cloud-api.md#business-scoped-user-ids).
const PhoneOnlyReason = "authentication template %s needs a phone number: Meta does not send it to a business-scoped user id (131062)"

// phoneOnly is the screen's PhoneOnly for spec: the reason when its
// template was synced as an AUTHENTICATION one, "" otherwise (or when the
// lists know no templates).
func phoneOnly(ctx context.Context, lists any, spec campaign.Spec) (string, error) {
	tl, ok := lists.(interface {
		Templates(ctx context.Context) ([]campaign.Template, error)
	})
	if !ok || spec.Kind != campaign.KindTemplate {
		return "", nil
	}
	ts, err := tl.Templates(ctx)
	if err != nil {
		return "", err
	}
	for _, t := range ts {
		if t.Name == spec.Template && (spec.Lang == "" || t.Language == spec.Lang) && strings.EqualFold(t.Category, "AUTHENTICATION") {
			return fmt.Sprintf(PhoneOnlyReason, spec.Template), nil
		}
	}
	return "", nil
}

// normalizeRecipient is a command line's recipient: a number in E.164, or
// a business-scoped user id as written (suppress add US.1349…).
func normalizeRecipient(arg, region string) (string, error) {
	a := strings.TrimSpace(arg)
	if campaign.LooksLikeBSUID(a) {
		if why := campaign.CheckBSUID(a); why != "" {
			return "", fmt.Errorf("%w: %s", recipients.ErrUserID, why)
		}
		return a, nil
	}
	return recipients.NormalizePhone(arg, region)
}
