/* setopt() takes its option as a char *, as its prototype says. */
BEGIN
{
	setopt(1);
}
