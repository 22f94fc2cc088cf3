package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// scriptOf is the sbatch habit, labmate job submit run.sh: a single argument that is a file
// here, not a command, is the job's bash script (as --script run.sh), and it says so. A file
// whose #! names another interpreter is refused, naming the command to give instead; so is a
// first argument that is a file here but no command (run.sh ARGS), and, for a local job, a
// command that is on no directory of PATH, before anything is submitted.
func scriptOf(args []string, scheduler string) (script string, err error) {
	if len(args) == 0 {
		return "", nil
	}
	cmd := args[0]
	fi, statErr := os.Stat(cmd)
	isFile := statErr == nil && fi.Mode().IsRegular()
	_, lookErr := exec.LookPath(cmd)
	if strings.Contains(cmd, "/") || (!isFile && lookErr == nil) {
		return "", nil // a path, run as it is, or a command found on PATH
	}
	switch {
	case isFile && len(args) == 1:
		if interp := shebang(cmd); interp != "" && !strings.HasSuffix(interp, "sh") {
			return "", fmt.Errorf("%s starts with #!%s, and a job's script runs in bash: give the interpreter, e.g. labmate job submit -- %s %s",
				cmd, interp, interp, cmd)
		}
		return cmd, nil
	case isFile:
		return "", fmt.Errorf("%s is a file here, not a command: give labmate job submit -- sh %s (or ./%s when it is executable)",
			cmd, strings.Join(args, " "), strings.Join(args, " "))
	case scheduler == "local":
		return "", fmt.Errorf("%q is no command on PATH and no file here (give an existing program, a path such as ./run.sh, or --script FILE)", cmd)
	}
	return "", nil // Slurm's nodes may have what this machine has not
}

// shebang is the interpreter a script's #! line names, its program's base name after env
// ("python3" for #!/usr/bin/env python3), or "" when it has none.
func shebang(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	rest, ok := strings.CutPrefix(line, "#!")
	if !ok {
		return ""
	}
	w := strings.Fields(rest)
	if len(w) == 0 {
		return ""
	}
	prog := w[0][strings.LastIndex(w[0], "/")+1:]
	if prog == "env" && len(w) > 1 {
		prog = w[1]
	}
	return prog
}
