package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/config"
)

// cmdHealth is a health check for images with no shell, curl or wget
// (distroless): it GETs the admin /readyz (with -live: /health) and exits
// 0 on a 200, 1 otherwise with one line on stderr saying why. Every
// failure, a bad flag included, is exit 1: Docker reserves 2 for a
// HEALTHCHECK.
//
// The admin URL is -url, else the config's admin.listen, else
// http://127.0.0.1:9464 (the default admin.listen). The config is the one
// serve would read: -config, else FIRSTBYTE_CONFIG, else firstbyte.yaml if
// it exists. Only admin.listen is read from it: a config that serve would
// now refuse on reload still names the address the running process
// listens on.
func cmdHealth(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rawURL := fs.String("url", "", "admin base URL (default: from the config's admin.listen, else http://"+config.DefaultAdminListen+")")
	live := fs.Bool("live", false, "check liveness (/health) instead of readiness (/readyz)")
	config := fs.String("config", "", "config to read admin.listen from (default: FIRSTBYTE_CONFIG, else firstbyte.yaml if it exists)")
	timeout := fs.Duration("timeout", 2*time.Second, "give up after this long")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 1
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "firstbyte health: unexpected argument %q\n", fs.Arg(0))
		return 1
	}
	if *timeout <= 0 {
		fmt.Fprintln(stderr, "firstbyte health: -timeout must be positive")
		return 1
	}
	base, err := healthBaseURL(*rawURL, *config, os.LookupEnv, fileExists)
	if err != nil {
		fmt.Fprintf(stderr, "firstbyte health: %v\n", err)
		return 1
	}
	path := "readyz"
	if *live {
		path = "health"
	}
	target := base.JoinPath(path).String()
	status, err := probe(target, *timeout)
	if err != nil {
		fmt.Fprintf(stderr, "firstbyte health: GET %s: %v\n", target, err)
		return 1
	}
	fmt.Fprintf(stdout, "GET %s: %s\n", target, status)
	return 0
}

// probe GETs target once, without a proxy or redirects (a probe asks the
// process itself), and returns the status line when it is 200, else an
// error saying what came back.
func probe(target string, timeout time.Duration) (string, error) {
	client := &http.Client{
		Timeout:       timeout,
		Transport:     &http.Transport{Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Get(target)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // the URL is already in the caller's line
		}
		return "", err
	}
	defer resp.Body.Close()
	// The gateway's answers are a word ("ready", "not ready"); anything
	// longer is not its admin listener, and is cut.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	why := strings.Join(strings.Fields(string(body)), " ")
	if len(why) > 80 {
		why = why[:80] + "…"
	}
	if resp.StatusCode != http.StatusOK {
		if why != "" {
			return "", fmt.Errorf("%s (%s)", resp.Status, why)
		}
		return "", errors.New(resp.Status)
	}
	return resp.Status, nil
}

// healthBaseURL is the admin listener's base URL: rawURL when given (a
// bare host:port is taken as http), else the config's admin.listen, else
// the default admin.listen. The config is configFlag, else FIRSTBYTE_CONFIG,
// else firstbyte.yaml when it exists; one named explicitly must be
// readable.
func healthBaseURL(rawURL, configFlag string, lookup func(string) (string, bool), exists func(string) bool) (*url.URL, error) {
	if rawURL != "" {
		if !strings.Contains(rawURL, "://") {
			rawURL = "http://" + rawURL
		}
		u, err := url.Parse(rawURL)
		if err != nil {
			return nil, fmt.Errorf("-url: %v", err)
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("-url %q: want http://HOST:PORT", rawURL)
		}
		return u, nil
	}
	path, explicit := configFlag, configFlag != ""
	if !explicit {
		if p, ok := lookup("FIRSTBYTE_CONFIG"); ok && p != "" {
			path, explicit = p, true
		}
	}
	listen := config.DefaultAdminListen
	if !explicit && exists("firstbyte.yaml") {
		path, explicit = "firstbyte.yaml", true
	}
	if explicit {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading admin.listen: %v", err)
		}
		cfg, err := config.Parse(data, lookup)
		if err != nil {
			return nil, fmt.Errorf("reading admin.listen from %s: %v", path, firstLine(err))
		}
		listen = cfg.Admin.Listen
	}
	return adminURL(listen)
}

// adminURL is the URL a process on the same host reaches a listen address
// at: a wildcard host (0.0.0.0, ::, empty) is dialled on loopback.
func adminURL(listen string) (*url.URL, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("admin.listen %q: %v", listen, err)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return &url.URL{Scheme: "http", Host: net.JoinHostPort(host, port)}, nil
}

// firstLine keeps a config error to one line: the health check's output
// is one line.
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}
