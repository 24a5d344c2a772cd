module github.com/firstbyte-dev/firstbyte/examples/clients/go

go 1.26.8

replace github.com/firstbyte-dev/firstbyte => ../../..

require (
	github.com/firstbyte-dev/firstbyte v0.0.0-00010101000000-000000000000
	github.com/openai/openai-go/v3 v3.99.0
)

require (
	github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream v1.7.27 // indirect
	github.com/aws/smithy-go v1.28.9 // indirect
	github.com/coder/websocket v1.8.15 // indirect
	github.com/goccy/go-yaml v1.19.2 // indirect
	github.com/tidwall/gjson v1.20.0 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.1 // indirect
	github.com/tidwall/sjson v1.2.5 // indirect
)
