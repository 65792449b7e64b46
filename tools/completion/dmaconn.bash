# SPDX-License-Identifier: BSD-3-Clause
# bash completion for dmaconn(1)
_dmaconn()
{
	local cur prev
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	case $prev in
	-d | --device-type)
		COMPREPLY=($(compgen -W 'cuda rocm xpu' -- "$cur"))
		return
		;;
	-c | --connection)
		# The connections of the chosen type, as the program lists them.
		local type="" i
		for ((i = 1; i < COMP_CWORD; i++)); do
			case ${COMP_WORDS[i]} in
			-d | --device-type) type=${COMP_WORDS[i + 1]} ;;
			esac
		done
		local conns
		conns=$("${COMP_WORDS[0]}" --list 2>/dev/null | awk -v t="$type" 't == "" || $1 == t { print $2 }')
		COMPREPLY=($(compgen -W "${conns:-nvlink p2p multicast infinity_fabric xelink}" -- "$cur"))
		return
		;;
	--record | --replay)
		COMPREPLY=($(compgen -f -- "$cur"))
		compopt -o filenames 2>/dev/null
		return
		;;
	--timeout | --expect-links | --bind)
		return
		;;
	--expect)
		COMPREPLY=($(compgen -f -- "$cur"))
		compopt -o filenames 2>/dev/null
		return
		;;
	--match)
		COMPREPLY=($(compgen -W 'position identity' -- "$cur"))
		return
		;;
	-f | --format)
		COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" --format help 2>/dev/null | awk '{ print $1 }')" -- "$cur"))
		return
		;;
	esac
	if [ "${COMP_WORDS[1]}" = check ]; then
		COMPREPLY=($(compgen -W '--expect --expect-links --fully-connected --match --device-type
			--connection --verify --replay --json --quiet --help' -- "$cur"))
		return
	fi
	if [ "$COMP_CWORD" = 1 ] && [[ $cur != -* ]]; then
		COMPREPLY=($(compgen -W 'check' -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -W '--device-type --connection --all --json --format --list --topo --nics --bind --verify
		--timeout --no-cache --explain --record --replay --mpi --quiet --help --version' -- "$cur"))
}
complete -F _dmaconn dmaconn
