package postgres

// SearchCandidates is the number of memories a search term's lookup reads.
const SearchCandidates = searchCandidates
