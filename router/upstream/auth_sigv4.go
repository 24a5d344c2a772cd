package upstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// bedrockService is the SigV4 signing name of the Bedrock runtime.
const bedrockService = "bedrock"

// sigV4 signs each request with AWS Signature Version 4 over its exact
// body (the payload hash is the body's SHA-256), with credentials the
// refresher keeps fresh: signing never fetches one.
type sigV4 struct {
	creds  *credentialCache[aws.Credentials]
	signer *v4.Signer
	region string
	now    func() time.Time
}

func newSigV4(creds *credentialCache[aws.Credentials], region string, now func() time.Time) *sigV4 {
	return &sigV4{creds: creds, signer: v4.NewSigner(), region: region, now: now}
}

func (s *sigV4) authorize(req *http.Request, body []byte) error {
	creds, cerr := s.creds.get()
	if cerr != nil {
		return cerr
	}
	sum := sha256.Sum256(body)
	var hash [2 * sha256.Size]byte
	hex.Encode(hash[:], sum[:])
	// The signer escapes the (already escaped) path again for the
	// canonical request, as the service does when it checks it.
	return s.signer.SignHTTP(context.Background(), creds, req, string(hash[:]), bedrockService, s.region, s.now().UTC())
}
