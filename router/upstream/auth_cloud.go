package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"golang.org/x/oauth2/google"
)

// The clouds' own credential chains, each behind a credentialFetch that
// only the refresher goroutine calls. The SDKs keep their own caches; ours
// is what the request path reads, so it never waits on a token endpoint.

// Scopes of the tokens the gateway asks for.
const (
	azureScope  = "https://cognitiveservices.azure.com/.default"
	googleScope = "https://www.googleapis.com/auth/cloud-platform"
)

// azureEntraFetch gets Microsoft Entra ID tokens from
// DefaultAzureCredential (environment, workload identity, managed
// identity, the Azure CLI...).
func azureEntraFetch() credentialFetch[[]string] {
	var cred *azidentity.DefaultAzureCredential
	return func(ctx context.Context) ([]string, time.Time, error) {
		if cred == nil {
			c, err := azidentity.NewDefaultAzureCredential(nil)
			if err != nil {
				return nil, time.Time{}, firstLine(err)
			}
			cred = c
		}
		tok, err := cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{azureScope}})
		if err != nil {
			return nil, time.Time{}, firstLine(err)
		}
		return []string{"Bearer " + tok.Token}, tok.ExpiresOn, nil
	}
}

// googleFetch gets OAuth2 access tokens (scope cloud-platform) from the
// credentials file, or Application Default Credentials when file is "".
func googleFetch(file string) credentialFetch[[]string] {
	var creds *google.Credentials
	return func(ctx context.Context) ([]string, time.Time, error) {
		if creds == nil {
			c, err := googleCredentials(ctx, file)
			if err != nil {
				return nil, time.Time{}, err
			}
			creds = c
		}
		tok, err := creds.TokenSource.Token()
		if err != nil {
			return nil, time.Time{}, firstLine(err)
		}
		return []string{"Bearer " + tok.AccessToken}, tok.Expiry, nil
	}
}

// googleCredentials reads a credentials file of a type it names, or ADC.
func googleCredentials(ctx context.Context, file string) (*google.Credentials, error) {
	// The token source outlives this fetch: it refreshes on its own
	// context, not the refresher's, which may be cancelled.
	ctx = context.WithoutCancel(ctx)
	if file == "" {
		c, err := google.FindDefaultCredentials(ctx, googleScope)
		if err != nil {
			return nil, firstLine(err)
		}
		return c, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("cannot read the credentials file: %w", unwrapPath(err))
	}
	var head struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(data, &head) != nil || head.Type == "" {
		return nil, errors.New("the credentials file is not a Google credentials JSON (no \"type\")")
	}
	c, err := google.CredentialsFromJSONWithType(ctx, data, google.CredentialsType(head.Type), googleScope)
	if err != nil {
		return nil, firstLine(err)
	}
	return c, nil
}

// awsFetch gets credentials from the AWS default chain (environment,
// shared config and profile, web identity / IRSA, ECS, IMDS).
func awsFetch(region, profile string) credentialFetch[aws.Credentials] {
	var provider aws.CredentialsProvider
	return func(ctx context.Context) (aws.Credentials, time.Time, error) {
		if provider == nil {
			opts := []func(*awsconfig.LoadOptions) error{awsconfig.WithRegion(region)}
			if profile != "" {
				opts = append(opts, awsconfig.WithSharedConfigProfile(profile))
			}
			cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
			if err != nil {
				return aws.Credentials{}, time.Time{}, firstLine(err)
			}
			provider = cfg.Credentials
		}
		if provider == nil {
			return aws.Credentials{}, time.Time{}, errors.New("no AWS credentials in the default chain")
		}
		return retrieveAWS(ctx, provider)
	}
}

// awsProviderFetch gets credentials from p (tests, the simulator).
func awsProviderFetch(p aws.CredentialsProvider) credentialFetch[aws.Credentials] {
	return func(ctx context.Context) (aws.Credentials, time.Time, error) { return retrieveAWS(ctx, p) }
}

// retrieveAWS asks p for credentials, and when they expire.
func retrieveAWS(ctx context.Context, p aws.CredentialsProvider) (aws.Credentials, time.Time, error) {
	c, err := p.Retrieve(ctx)
	if err != nil {
		return aws.Credentials{}, time.Time{}, firstLine(err)
	}
	var exp time.Time
	if c.CanExpire {
		exp = c.Expires
	}
	return c, exp, nil
}

// firstLine is err's first line: the SDKs' errors run to many lines of
// advice, and one log line is wanted. They name what failed, never a
// secret.
func firstLine(err error) error {
	s := err.Error()
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return errors.New(s[:i])
		}
	}
	return err
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func osGetenv(k string) string { return os.Getenv(k) }
