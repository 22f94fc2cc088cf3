# labmate's bash driver, sourced once by an interactive bash that reads cell frames from a
# pipe. Interactive, because SIGINT then aborts the running command line and returns to the
# prompt with every variable kept, instead of killing the shell.
set +o history
PS1='' PS2=''

__labmate_mark() { # TAG STATUS LINE MESSAGE: end a cell on stdout, stderr and the side channel
	local m=${4//\\/\\\\}
	m=${m//$'\n'/\\n}
	printf '\n%s\n' "$1"
	printf '\n%s\n' "$1" >&2
	printf 'E\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${m//$'\t'/\\t}" >&3
}

__labmate_run() { # TAG FILE: run one cell in this shell, its stdin /dev/null
	local __labmate_tag=$1 __labmate_file=$2 __labmate_rc
	set --
	source "$__labmate_file" </dev/null
	__labmate_rc=$?
	if [ "$__labmate_rc" -eq 0 ]; then
		__labmate_mark "$__labmate_tag" ok 0 ""
	else
		__labmate_mark "$__labmate_tag" error 0 "exit status $__labmate_rc"
	fi
}

# labmate_log NAME VALUE... [t=T]: record a telemetry sample on labmate's side channel.
labmate_log() {
	if [ $# -lt 2 ]; then
		echo "usage: labmate_log NAME VALUE... [t=TIME]" >&2
		return 2
	fi
	local name=$1 t= v=()
	shift
	for a in "$@"; do
		case $a in
		t=*) t=${a#t=} ;;
		*) v+=("$a") ;;
		esac
	done
	printf 'S\t%s\t%s\t%s\n' "$name" "$t" "${v[*]}" >&3
}
