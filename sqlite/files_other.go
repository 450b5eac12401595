//go:build !unix

package sqlite

import "os"

// canWrite tries to open the file name for writing; a directory passes.
func canWrite(name string) error {
	fi, err := os.Stat(name)
	if err != nil || fi.IsDir() {
		return err
	}
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err == nil {
		f.Close()
	}
	return err
}
