package memorytool

import (
	"io/fs"
	"syscall"
	"time"
)

// accessTime is fi's last access time, or the zero time if unknown.
func accessTime(fi fs.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Atim.Unix())
	}
	return time.Time{}
}
