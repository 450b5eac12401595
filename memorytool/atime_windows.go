package memorytool

import (
	"io/fs"
	"syscall"
	"time"
)

// accessTime is fi's last access time, or the zero time if unknown.
// NTFS keeps it lazily, but a read through Local sets it itself
// (Local.read), so expiry sees every read made through the tool.
func accessTime(fi fs.FileInfo) time.Time {
	if d, ok := fi.Sys().(*syscall.Win32FileAttributeData); ok {
		return time.Unix(0, d.LastAccessTime.Nanoseconds())
	}
	return time.Time{}
}
