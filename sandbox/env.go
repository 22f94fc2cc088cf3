package sandbox

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ErrEnvRefused is wrapped by CheckUserEnv's errors: a request named an environment variable
// that changes how a program loads or starts.
var ErrEnvRefused = errors.New("environment variable refused")

// refusedPrefixes and refusedNames are the environment variables a request may not set: each
// makes a program load or run code that the program did not ask for, before or beside its own.
// A request's environment reaches only the sandboxed command (never labmate's host processes:
// the job recorder, bwrap, the wrappers), so these are refused as a second wall, and so that a
// value planted once cannot follow a job to wherever it runs (Slurm runs a job's script as the
// submitting user, outside any sandbox). A job that needs one sets it in its own script
// (export PYTHONPATH=…), inside the sandbox.
var refusedPrefixes = map[string]string{
	"LD_":        "it steers the dynamic linker (preloaded or audit libraries, library paths) of every program",
	"DYLD_":      "it steers the dynamic linker",
	"BASH_FUNC_": "it defines bash functions that every bash started imports",
	"OCTAVE_":    "it tells Octave where its home, libraries and startup files are",
}

var refusedNames = map[string]string{
	// glibc's own list of unsafe variables (which it drops for set-id programs).
	"GCONV_PATH":       "it makes glibc load character-conversion modules from a directory it names",
	"GETCONF_DIR":      "it tells glibc's getconf which programs to run",
	"GLIBC_TUNABLES":   "it tunes glibc's allocator and loader (and has been a way into the loader before)",
	"HOSTALIASES":      "it makes the resolver read a file it names",
	"LOCALDOMAIN":      "it changes how the resolver reads names",
	"LOCPATH":          "it makes glibc load locales from a directory it names",
	"MALLOC_TRACE":     "it makes glibc write a trace to a file it names",
	"NIS_PATH":         "it changes where glibc looks names up",
	"NLSPATH":          "it makes programs load message catalogs from paths it names",
	"RESOLV_HOST_CONF": "it makes the resolver read a file it names",
	"RES_OPTIONS":      "it changes how the resolver works",
	// Shells.
	"BASH_ENV":       "bash runs the file it names before any script",
	"ENV":            "sh runs the file it names at startup",
	"SHELLOPTS":      "it sets bash's options at startup",
	"BASHOPTS":       "it sets bash's options at startup",
	"PS4":            "bash expands it (running the commands it holds) before each traced command",
	"PROMPT_COMMAND": "bash runs it before each prompt",
	// Interpreters.
	"PYTHONSTARTUP":     "Python runs the file it names at startup",
	"PYTHONPATH":        "Python imports modules from the directories it names first",
	"PYTHONHOME":        "it tells Python where its standard library is",
	"PYTHONUSERBASE":    "Python imports modules from under the directory it names",
	"PYTHONPLATLIBDIR":  "it tells Python where its standard library is",
	"PYTHONBREAKPOINT":  "Python imports and calls what it names at breakpoint()",
	"PYTHONWARNINGS":    "Python imports the warning categories it names",
	"PYTHONEXECUTABLE":  "it changes which interpreter Python believes it is",
	"PERL5LIB":          "Perl loads modules from the directories it names first",
	"PERLLIB":           "Perl loads modules from the directories it names first",
	"PERL5OPT":          "Perl takes it as options, loading modules at startup",
	"PERL5DB":           "Perl runs it as its debugger",
	"NODE_OPTIONS":      "Node.js takes it as options, loading modules at startup",
	"NODE_PATH":         "Node.js loads modules from the directories it names",
	"RUBYOPT":           "Ruby takes it as options, loading libraries at startup",
	"RUBYLIB":           "Ruby loads libraries from the directories it names first",
	"LUA_INIT":          "Lua runs it at startup",
	"JAVA_TOOL_OPTIONS": "the JVM takes it as options, loading agents at startup",
	"_JAVA_OPTIONS":     "the JVM takes it as options, loading agents at startup",
	"JDK_JAVA_OPTIONS":  "the JVM takes it as options, loading agents at startup",
	"OPENSSL_CONF":      "OpenSSL loads the configuration it names, with the engines and modules it lists",
	"OPENSSL_ENGINES":   "OpenSSL loads engines from the directory it names",
	"OPENSSL_MODULES":   "OpenSSL loads providers from the directory it names",
}

// RefusedEnv says why a request may not set the environment variable name ("" when it may):
// the variable changes how a program loads or starts (LD_PRELOAD, GCONV_PATH, PYTHONSTARTUP,
// PYTHONPATH, BASH_ENV, NODE_OPTIONS, OCTAVE_HOME, …; RefusedEnvNames lists them all).
func RefusedEnv(name string) string {
	if why, ok := refusedNames[name]; ok {
		return why
	}
	for p, why := range refusedPrefixes {
		if strings.HasPrefix(name, p) {
			return why
		}
	}
	return ""
}

// RefusedEnvNames lists the variables RefusedEnv refuses, sorted; a prefix ends in "*".
func RefusedEnvNames() []string {
	out := slices.Collect(maps.Keys(refusedNames))
	for p := range refusedPrefixes {
		out = append(out, p+"*")
	}
	slices.Sort(out)
	return out
}

// CheckUserEnv checks an environment that a request (a job's spec, a tool call) asks for: a
// name that RefusedEnv refuses is an error wrapping ErrEnvRefused that names the variable and
// says why and what to do instead. Names are checked in sorted order, so the error is the same
// every time.
func CheckUserEnv(env map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(env)) {
		if why := RefusedEnv(name); why != "" {
			return fmt.Errorf("env: %s: %w: %s; labmate never lets a request set it (set it inside the job's own script if the job needs it)",
				name, ErrEnvRefused, why)
		}
	}
	return nil
}
