BEGIN
{
	cnt["a"] = 1;
}

BEGIN
{
	cnt["a"]++;
	cnt["b"] = 5;
}

BEGIN
{
	printf("%d %d\n", cnt["a"], cnt["b"]);
	exit(0);
}
