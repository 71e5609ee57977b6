package e2e

// The tests drive a binary built in TestMain, which go test's cache can't
// see: importing the command tree makes every change to wasend's code a
// change to this test binary, so a cached pass never outlives the code.
import _ "github.com/wasend/wasend/cmd"
