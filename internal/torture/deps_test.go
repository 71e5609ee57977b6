//go:build torture

package torture

// The tests drive a binary built in TestMain, which go test's cache can't
// see: importing the command tree makes every change to wasend's code a
// change to this test binary.
import _ "github.com/wasend/wasend/cmd"
