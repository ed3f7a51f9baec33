/* A clause may commit (and discard) several speculations. */
#pragma D option nspec=3

BEGIN
{
	i = speculation();
	j = speculation();
	k = speculation();
}

BEGIN
{
	speculate(i);
	printf("i %d\n", i);
}

BEGIN
{
	speculate(j);
	printf("j %d\n", j);
}

BEGIN
{
	speculate(k);
	printf("k %d\n", k);
}

BEGIN
{
	commit(k);
	discard(j);
	commit(i);
}

BEGIN
{
	exit(0);
}
