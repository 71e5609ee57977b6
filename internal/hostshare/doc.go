// Package hostshare is what several hosts share beside the limits gate's
// admissions, and the choice of where it is recorded. Under --limits
// (a Redis URL) the suppression list and the tier and global settings are
// recorded in Redis (Shared) and each host's database follows: the command
// that changes them writes Redis first, then this database, and every
// sender copies Redis into its own database (Sync), where claims read
// them. Without --limits the database is the record (Record is the one
// place that says which). The commands that work on the shared limits
// themselves — a quota reset, limits status, adding a lost host's count —
// reach the gates through Limits.
//
// It sits above the store and the Redis gate and imports both; neither
// imports it, and the commands reach Redis only through it.
package hostshare
