// Package e2e holds wasend's end-to-end tests. They build the real binary
// once, run it as separate processes against a real HTTP sandbox of the
// Cloud API and a real SQLite file, and check its promises from the
// server's side: nobody messaged twice, every limit kept, and every
// message wasend calls sent really accepted.
//
// The package has no code outside its tests.
package e2e
