package runner

import (
	"context"
	"net/http"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/doctor"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/whatsapp"
)

// DoctorReport is what `wasend doctor` found (doctor.Report; cmd reaches
// the doctor through runner).
type DoctorReport = doctor.Report

// DoctorClock is the shared limits' Redis as the doctor reads it
// (*hostshare.Limits is one).
type DoctorClock = doctor.Clock

// DoctorOptions are what `wasend doctor` checks, as the command line and
// the environment give them.
type DoctorOptions struct {
	// Store is the database; nil when it could not be opened, StoreErr
	// says why.
	Store        driver.Driver
	StoreErr     error
	DatabasePath string
	// ZoneAsked is WASEND_TZ ("" when unset).
	ZoneAsked string
	API       APIConfig
	// AppSecret and VerifyToken are the webhook secrets from the
	// environment; WebhookURL the receiver's public URL to test.
	AppSecret, VerifyToken, WebhookURL string
	// Limits is the shared limits under --limits (nil without);
	// LimitsErr says why they could not be dialed.
	Limits    DoctorClock
	LimitsErr error
	// Timeout bounds each request.
	Timeout time.Duration
	Now     func() time.Time
	// Flags end every command the report suggests (hint.Flags).
	Flags string
}

// Doctor checks the set-up (internal/doctor) with the real parts: the
// database, the Cloud API (or, under --sandbox, a sandbox served for the
// check), the webhook receiver and Redis.
func Doctor(ctx context.Context, o DoctorOptions) DoctorReport {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	c := doctor.Config{
		DatabasePath: o.DatabasePath, DatabaseErr: o.StoreErr, ZoneAsked: o.ZoneAsked,
		BaseURL: o.API.BaseURL, Version: o.API.Version, Token: o.API.Token, Sandbox: o.API.Sandbox,
		NumberInfo: func(p whatsapp.PhoneNumber) (campaign.NumberInfo, error) { return NumberInfo(p, o.Now()) },
		AppSecret:  o.AppSecret, VerifyToken: o.VerifyToken, WebhookURL: o.WebhookURL,
		HTTP:   &http.Client{Timeout: o.Timeout},
		Limits: o.Limits, LimitsErr: o.LimitsErr,
		Now: o.Now, Flags: o.Flags,
	}
	if o.Store != nil {
		c.Database = doctorDB{o.Store}
		c.Zone, c.ZoneErr = o.Store.Location(), o.Store.QuotaDayOpens()
		api, err := OpenAPI(ctx, o.Store, o.API, sandbox.Options{})
		if err != nil {
			c.Database, c.DatabaseErr = nil, err
		} else {
			defer api.Close()
			client := api.Client(o.Timeout)
			defer client.CloseIdleConnections()
			c.Graph, c.BaseURL, c.Token = client, api.BaseURL, api.Token
		}
	}
	return doctor.Run(ctx, c)
}

// doctorDB is the database as the doctor reads it.
type doctorDB struct{ st driver.Driver }

func (d doctorDB) Accounts(ctx context.Context) ([]campaign.AccountStatus, error) {
	return d.st.Accounts(ctx)
}

func (d doctorDB) Templates(ctx context.Context) ([]campaign.Template, error) {
	return readmodel.New(d.st).Templates(ctx)
}

func (d doctorDB) MarketingStatuses(ctx context.Context) (map[string]string, error) {
	return readmodel.New(d.st).MarketingStatuses(ctx)
}
