package memorytool

// FormatSize lets external tests render sizes the way listings do.
var FormatSize = formatSize

// GeneralPathOnly makes l resolve every path the general way, as on a
// system without openat2, so that tests compare both ways with the
// reference.
func GeneralPathOnly(l *Local) { l.fast.disable() }
