module github.com/memstore/memstore

go 1.26
