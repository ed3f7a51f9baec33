#pragma D option agghist

BEGIN
{
	@["demerit"] = sum(-10);
	@["wtf"] = sum(10);
	@["bot"] = sum(20);
	exit(0);
}
