package web

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/queuewatch/queuewatch/web/auth"
)

// TestBrowserOIDCLogin: chromium opens a DLQ page, is sent to the sign-in
// page, signs in on Dex's real login form and lands back on the page it
// asked for, named and with the role of its groups; sign-out ends it.
// Then a user of another group does the same and gets another role. The
// session cookie is out of scripts' reach (HttpOnly). QW_OIDC_SHOTS=dir
// saves the steps.
func TestBrowserOIDCLogin(t *testing.T) {
	s := newDexSite(t)
	b := newBrowser(t, 1280, 800)
	shot := func(name string) {
		if dir := os.Getenv("QW_OIDC_SHOTS"); dir != "" {
			png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
			}
			if err != nil {
				t.Error(err)
			}
		}
	}
	page := "/dlq/" + url.PathEscape(testDLQ)
	signIn := func(email, password, role string) {
		b.run(t, chromedp.Navigate(s.a+page))
		b.waitJS(t, "the sign-in page", `document.getElementById('signin') !== null`, 15*time.Second)
		if got := evalJS[string](t, b, `document.getElementById('signin').textContent`); !strings.HasPrefix(got, "Sign in with 127.0.0.1:") {
			t.Errorf("sign-in button %q", got)
		}
		shot("signin")
		b.runAgainIfStale(t, chromedp.Click(chromedp.ID("signin")))
		b.waitJS(t, "Dex's login form", `document.querySelector('input[name="login"]') !== null`, 15*time.Second)
		// A stale node means a new document, whose fields are empty again:
		// typing once more doubles nothing.
		b.runAgainIfStale(t,
			chromedp.SendKeys(chromedp.CSS(`input[name="login"]`), email),
			chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), password),
		)
		shot("dex-" + role)
		b.runAgainIfStale(t, chromedp.Submit(chromedp.CSS(`input[name="password"]`)))
		b.waitJS(t, "back on the DLQ page, signed in", `location.pathname === '/dlq/`+url.PathEscape(url.PathEscape(testDLQ))+`' || location.pathname === '`+page+`'`, 20*time.Second)
		b.waitJS(t, "the header", `document.querySelector('.who .user') !== null`, 10*time.Second)
		if who := evalJS[string](t, b, `document.querySelector('.who').innerText`); !strings.Contains(who, email) || !strings.Contains(who, "("+role+")") || !strings.Contains(who, "Sign out") {
			t.Errorf("header %q, want %s (%s) and Sign out", who, email, role)
		}
		shot("signed-in-" + role)
	}

	signIn("ann@example.com", "ann-pw-1", "admin")
	cookie := evalJS[string](t, b, `document.cookie`)
	if strings.Contains(cookie, auth.SessionCookie) {
		t.Errorf("the session cookie is readable by scripts: %q", cookie)
	}
	// The page refreshes every few seconds: a click can find its button
	// replaced, and is then made on the new one.
	b.runAgainIfStale(t, chromedp.Click(chromedp.CSS(`form.signout button`)))
	b.waitJS(t, "signed out", `document.body.innerText.includes('You are signed out')`, 15*time.Second)
	shot("signed-out")
	b.run(t, chromedp.Navigate(s.a+page))
	b.waitJS(t, "sent to sign in again", `document.getElementById('signin') !== null`, 15*time.Second)

	signIn("bob@example.com", "bob-pw-1", "operator")
	b.checkClean(t)
}
