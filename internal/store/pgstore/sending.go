package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/campaign"
)

// SetSending keeps a run's --max-held (each run's own, as its budget) and
// --ttl (0 keeps the stored one, for a resumed run) with its campaign, and
// returns the TTL in force.
func (s *Store) SetSending(ctx context.Context, id int64, maxHeld int, ttl time.Duration) (time.Duration, error) {
	var secs int64
	err := s.pool.QueryRow(ctx, `UPDATE campaigns SET max_held = $1, ttl = CASE WHEN $2::bigint > 0 THEN $2::bigint ELSE ttl END
		WHERE id = $3 RETURNING ttl`, max(maxHeld, 0), int64(ttl/time.Second), id).Scan(&secs)
	if errors.Is(err, pgx.ErrNoRows) {
		err = campaign.ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("keep campaign %d's sending settings: %w", id, err)
	}
	return time.Duration(secs) * time.Second, nil
}
