/* setopt()'s value may be computed in the probe: it is recorded and applied when its record comes (multiaggs/tst.sortpos). */
BEGIN
{
	@[1] = sum(3);
	@[2] = sum(1);
	j = 1;
	setopt("aggsortrev", lltostr(j));
	printa(@);
	exit(0);
}
