/* dt_cook_op3 cooks both branches before refusing an action in them: an
   action's own prototype error comes first. */
BEGIN
{
	a = "boo";
	c = a == "boo" ? printf("error\n") : trace();
	exit(1);
}
