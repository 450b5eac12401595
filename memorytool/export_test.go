package memorytool

// FormatSize lets external tests render sizes the way listings do.
var FormatSize = formatSize
