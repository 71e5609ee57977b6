// Command wasend bulk-sends WhatsApp template messages through the Cloud API
// without getting throttled, banned or losing a message.
package main

import (
	"os"

	"github.com/wasend/wasend/cmd"
)

func main() { os.Exit(cmd.Main()) }
