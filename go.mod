module github.com/cellserver/cellserver

go 1.26.8

require (
	github.com/prometheus/client_model v0.3.0
	github.com/prometheus/common v0.42.0
	github.com/redis/go-redis/v9 v9.7.3
	github.com/yuin/gopher-lua v1.1.2
)

require (
	github.com/cespare/xxhash/v2 v2.2.0 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	github.com/golang/protobuf v1.5.2 // indirect
	github.com/matttproud/golang_protobuf_extensions v1.0.4 // indirect
	google.golang.org/protobuf v1.28.1 // indirect
)
