/* placeholder until the daemon lands */
int main(void);
int main(void) { return 2; }
