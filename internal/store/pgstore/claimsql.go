package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/wasend/wasend/internal/store/claimsql"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// sqlTx is a transaction, the pool or a claim (whose writes wait in its
// queue) as claimsql reads and writes through it.
type sqlTx struct{ q querier }

func (t sqlTx) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	return manageTx{t.q}.Exec(ctx, sql, args...)
}

func (t sqlTx) Query(ctx context.Context, sql string, args ...any) (claimsql.Rows, error) {
	if len(args) > 0 && args[0] == claimsql.PlanEachCall {
		args[0] = pgx.QueryExecModeCacheDescribe
	}
	rows, err := t.q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

func (t sqlTx) Accounts(ctx context.Context, where string, args ...any) ([]rowscan.Account, error) {
	return loadAccounts(ctx, t.q, where, args...)
}
