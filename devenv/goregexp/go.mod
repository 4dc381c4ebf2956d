module staticsite-operator/devenv/goregexp

go 1.24
