module github.com/blazeworld/blaze

go 1.26

require (
	github.com/golang/snappy v1.0.0
	github.com/klauspost/compress v1.18.0
	github.com/pierrec/lz4/v4 v4.1.33
)
