package sqlite

// PurgePages lets the tests purge the search indexes in small steps.
var PurgePages = &purgePages
