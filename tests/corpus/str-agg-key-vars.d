BEGIN
{
	this->k = "alpha";
	@s[this->k] = sum(1);
	@s[strjoin(this->k, "2")] = sum(2);
	@s["alpha"] = sum(10);
	printa("%s %@d\n", @s);
	exit(0);
}
