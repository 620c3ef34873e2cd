// Package s3test starts a real S3-compatible server for tests: versitygw
// (https://github.com/versity/versitygw) serving a temporary directory on
// loopback, installed with go install when it is missing. Tests skip when
// it cannot be installed, except in CI (CI=true), where they fail.
package s3test
