package config

import "fmt"

// Connect is a Kafka Connect cluster whose workers read from and write to
// the Kafka cluster it is listed under: each of its connectors is a reader
// (a sink reads through its consumer group, connect-<name>), polled with
// the Kafka cluster's own poll through the Connect REST API.
type Connect struct {
	Name string `yaml:"name"`
	// URL is the REST API of any worker of the Connect cluster
	// (http://connect:8083).
	URL  string      `yaml:"url"`
	Auth ConnectAuth `yaml:"auth"`
	TLS  TLS         `yaml:"tls"`
}

// ConnectAuth is how queuewatch authenticates to the Connect REST API:
// HTTP basic (Username with Password or PasswordFile), a bearer token
// (Token or TokenFile), or nothing. A file is read once at start, its
// surrounding white space trimmed.
type ConnectAuth struct {
	Username     string `yaml:"username"`
	Password     string `yaml:"password"`
	PasswordFile string `yaml:"password_file"`
	Token        string `yaml:"token"`
	TokenFile    string `yaml:"token_file"`
}

func (c *Connect) validate(p *problems, path string) {
	checkName(p, path+".name", c.Name)
	if c.URL == "" {
		p.add(path+".url", "required (the REST API of a Connect worker, such as http://connect:8083)")
	} else {
		checkURL(p, path+".url", c.URL, "http", "https")
	}
	c.Auth.validate(p, path+".auth")
	c.TLS.validate(p, path+".tls")
}

func (a *ConnectAuth) validate(p *problems, path string) {
	basic := a.Username != "" || a.Password != "" || a.PasswordFile != ""
	bearer := a.Token != "" || a.TokenFile != ""
	switch {
	case basic && bearer:
		p.add(path, "set username and password, or token, not both")
	case basic && a.Username == "":
		p.add(path+".username", "required with password")
	case basic && a.Password == "" && a.PasswordFile == "":
		p.add(path+".password", "required with username (or password_file)")
	}
	if a.Password != "" && a.PasswordFile != "" {
		p.add(path+".password_file", "set password or password_file, not both")
	}
	if a.Token != "" && a.TokenFile != "" {
		p.add(path+".token_file", "set token or token_file, not both")
	}
	checkFile(p, path+".password_file", a.PasswordFile)
	checkFile(p, path+".token_file", a.TokenFile)
}

// validateConnect checks the Connect clusters of one Kafka cluster, whose
// names are unique within it.
func validateConnect(p *problems, path string, cs []Connect) {
	seen := map[string]int{}
	for i := range cs {
		cs[i].validate(p, fmt.Sprintf("%s[%d]", path, i))
		checkUnique(p, seen, cs[i].Name, path, i)
	}
}

func (c *Connect) resolve(dir string) {
	c.TLS.resolve(dir)
	resolvePath(dir, &c.Auth.PasswordFile)
	resolvePath(dir, &c.Auth.TokenFile)
}
